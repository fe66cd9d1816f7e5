'use strict';
const assert = require('node:assert/strict');
const { paginate, pageCount } = require('./pages');
const { listUsers } = require('./api');
const tests = [];
const test = (name, fn) => tests.push([name, fn]);

const letters = ['a', 'b', 'c', 'd', 'e'];
test('page count', () => assert.equal(pageCount(5, 2), 3));
test('first page', () => assert.deepEqual(paginate(letters, 1, 2).items, ['a', 'b']));
test('second page', () => assert.deepEqual(paginate(letters, 2, 2).items, ['c', 'd']));
test('last page is short', () => assert.deepEqual(paginate(letters, 3, 2).items, ['e']));
test('api defaults to the first page', () => assert.deepEqual(listUsers(letters, { size: 3 }).items, ['a', 'b', 'c']));
test('page 0 is an error', () => assert.throws(() => paginate(letters, 0, 2), RangeError));

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
