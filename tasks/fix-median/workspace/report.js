'use strict';
const { mean, median } = require('./stats');

function summary(values) {
  return { n: values.length, mean: mean(values), median: median(values) };
}

module.exports = { summary };
