'use strict';
const { slugify } = require('./slug');

function postPath(post) {
  return `/posts/${post.id}-${slugify(post.title)}`;
}

module.exports = { postPath };
