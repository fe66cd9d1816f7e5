export * from './canonical';
export * from './chain';
export * from './envelope';
export * from './kinds';
export * from './limits';
export * from './upcast';
export * from './validate';
export * from './depth';
