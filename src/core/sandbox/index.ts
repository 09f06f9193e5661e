/**
 * The sandbox: Docker engine connection, the contract image, project containers (labelled
 * expbench.task / expbench.session / expbench.role), exec with streams, copy-in, orphan cleanup.
 * All through dockerode; nothing here imports vscode.
 */
export * from './connection';
export * from './images';
export * from './containers';
export { assertBindSources, assertNotHostUid, uidOfUser } from './binds';
export * from './exec';
export * from './copy';
export * from './ownership';
export * from './work';
export * from './gpus';
export * from './pause';
