'use strict';

function pageCount(total, size) {
  return Math.max(1, Math.ceil(total / size));
}

function paginate(items, page, size) {
  if (!Number.isInteger(page) || page < 1) throw new RangeError('page is 1-based');
  const start = page * size;
  return { page, pages: pageCount(items.length, size), items: items.slice(start, start + size) };
}

module.exports = { pageCount, paginate };
