export * from './diff';
export * from './normalise';
