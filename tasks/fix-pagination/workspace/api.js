'use strict';
const { paginate } = require('./pages');

function listUsers(users, query) {
  const page = Number(query.page ?? 1);
  const size = Number(query.size ?? 10);
  return paginate(users, page, size);
}

module.exports = { listUsers };
