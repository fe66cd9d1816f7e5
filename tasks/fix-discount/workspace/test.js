'use strict';
const assert = require('node:assert/strict');
const { applyDiscount, cartTotal } = require('./price');
const { receipt } = require('./cart');
const tests = [];
const test = (name, fn) => tests.push([name, fn]);

test('no discount keeps the price', () => assert.equal(applyDiscount(1999, 0), 1999));
test('10% off 10.00 is 9.00', () => assert.equal(applyDiscount(1000, 10), 900));
test('25% off 19.99 rounds to cents', () => assert.equal(applyDiscount(1999, 25), 1499));
test('100% off is free', () => assert.equal(applyDiscount(1234, 100), 0));
test('cart total applies the discount once', () =>
  assert.equal(cartTotal([{ priceCents: 500, qty: 2 }, { priceCents: 250, qty: 4 }], 20), 1600));
test('receipt shows the discounted total', () => assert.equal(receipt([{ priceCents: 1000, qty: 1 }], 50), '1 items, total $5.00'));
test('rejects a discount over 100%', () => assert.throws(() => applyDiscount(100, 101), RangeError));

let failed = 0;
tests.forEach(([name, fn], i) => {
  try {
    fn();
    console.log(`ok ${i + 1} - ${name}`);
  } catch (e) {
    failed += 1;
    console.log(`not ok ${i + 1} - ${name}`);
    console.log(`  # ${String(e.message).split('\n')[0]}`);
  }
});
console.log(`1..${tests.length}`);
console.log(`# pass ${tests.length - failed}`);
console.log(`# fail ${failed}`);
process.exitCode = failed ? 1 : 0;
