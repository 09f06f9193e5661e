/**
 * The proctored window (issue 13): the work container in its proctored shape (code-server from the
 * host's read-only install as main process, listening on a socket in the channel folder, NetworkMode
 * none, only the contract's mounts), the contract's check on `docker inspect`, and the host-side
 * forwarder with its session token. Composed with preparation and the session channel in
 * src/core/flows/proctoredBaseline.ts. Nothing here imports vscode.
 */
export * from './editor';
export * from './container';
export * from './contract';
export * from './forwarder';
export { readAiSettingsOnHost, type HostAiReading } from './aiReadBack';
export { EditorSocket } from './editorSocket';
export { editorFolders, prepareEditorFolders, sealChannel, type EditorFolders } from './folders';
