export * from './snapshots';
