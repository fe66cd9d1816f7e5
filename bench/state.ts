// (draft) see below
