'use strict';

function sortedCopy(values) {
  return [...values].sort((a, b) => a - b);
}

function mean(values) {
  if (values.length === 0) throw new RangeError('no values');
  return values.reduce((s, v) => s + v, 0) / values.length;
}

function median(values) {
  if (values.length === 0) throw new RangeError('no values');
  const sorted = sortedCopy(values);
  const mid = Math.floor(sorted.length / 2);
  return sorted[mid];
}

module.exports = { mean, median, sortedCopy };
