'use strict';
const assert = require('node:assert/strict');
const { mean, median } = require('./stats');
const { summary } = require('./report');
const tests = [];
const test = (name, fn) => tests.push([name, fn]);

test('mean', () => assert.equal(mean([1, 2, 3, 4]), 2.5));
test('median of an odd count', () => assert.equal(median([5, 1, 3]), 3));
test('median of an even count', () => assert.equal(median([4, 1, 3, 2]), 2.5));
test('median of two', () => assert.equal(median([10, 20]), 15));
test('median sorts numerically', () => assert.equal(median([100, 9, 20, 3]), 14.5));
test('summary', () => assert.deepEqual(summary([2, 4]), { n: 2, mean: 3, median: 3 }));
test('empty list is an error', () => assert.throws(() => median([]), RangeError));

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
