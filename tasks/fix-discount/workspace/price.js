'use strict';
// Prices are integer cents; a discount is a percentage from 0 to 100.

function applyDiscount(priceCents, percent) {
  if (!Number.isInteger(priceCents) || priceCents < 0) throw new RangeError('price must be whole cents');
  if (percent < 0 || percent > 100) throw new RangeError('percent must be between 0 and 100');
  return Math.round((priceCents * percent) / 100);
}

function cartTotal(items, percent = 0) {
  const subtotal = items.reduce((sum, item) => sum + item.priceCents * item.qty, 0);
  return applyDiscount(subtotal, percent);
}

module.exports = { applyDiscount, cartTotal };
