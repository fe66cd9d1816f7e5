'use strict';
const { cartTotal } = require('./price');

function formatCents(cents) {
  return `$${(cents / 100).toFixed(2)}`;
}

function receipt(items, percent) {
  return `${items.length} items, total ${formatCents(cartTotal(items, percent))}`;
}

module.exports = { formatCents, receipt };
