'use strict';
const assert = require('node:assert/strict');
const { slugify } = require('./slug');
const { postPath } = require('./routes');
const tests = [];
const test = (name, fn) => tests.push([name, fn]);

test('one word', () => assert.equal(slugify('Hello'), 'hello'));
test('two words', () => assert.equal(slugify('Hello World'), 'hello-world'));
test('three words', () => assert.equal(slugify('The Quick Fox'), 'the-quick-fox'));
test('punctuation is dropped', () => assert.equal(slugify('Hi, there!'), 'hi-there'));
test('runs of spaces and tabs become one dash', () => assert.equal(slugify('a  b\tc'), 'a-b-c'));
test('post path', () => assert.equal(postPath({ id: 7, title: 'Release Notes 2' }), '/posts/7-release-notes-2'));

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
