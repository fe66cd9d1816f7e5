export * from './types';
export { PROJECTION_VERSION, initialState, evolve, foldEvents, isTerminal } from './evolve';
export { changes, changesCapped } from './changes';
