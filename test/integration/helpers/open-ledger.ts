// Opens (so migrates) the ledger of the folder named by argv[2] and prints its schema version: one
// of the processes of the test that opens one new ledger from several processes at once.
import { Ledger } from '../../../electron/ledger';

const l = Ledger.open(process.argv[2]!);
console.log(l.db.pragma('user_version', { simple: true }));
l.close();
