export * from './diff';
export * from './normalise';
export * from './stored';
