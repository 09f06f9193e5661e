import * as path from 'node:path';
import type Docker from 'dockerode';
import type { SessionLayout } from '../layout';
import type { EditorInstall } from './editor';
import { proctoredBinds } from './container';

/**
 * Checks a proctored work container's `docker inspect` against the mount contract
 * (docs/architecture.md, "The mount contract"): its mounts are exactly {@link proctoredBinds}
 * (same sources, destinations and read-only flags; no volume, no other bind, so no Docker socket,
 * no `private/`, no cache), NetworkMode `none`, not privileged, no added capabilities or devices,
 * and a non-root user.
 * @returns one sentence per breach; empty when the container keeps the contract
 */
export function proctoredContractBreaches(info: Docker.ContainerInspectInfo, layout: SessionLayout, editor: EditorInstall): string[] {
  const out: string[] = [];
  const want = new Map(proctoredBinds(layout, editor).map((b) => [b.containerPath, b]));
  for (const m of info.Mounts) {
    const w = want.get(m.Destination);
    if (!w) out.push(`mount not in the contract: ${m.Type} ${m.Source ?? m.Name} at ${m.Destination}`);
    else {
      if (m.Type !== 'bind' || path.resolve(m.Source) !== path.resolve(w.hostPath)) out.push(`${m.Destination} comes from ${m.Type} ${m.Source}, not ${w.hostPath}`);
      if (m.RW === !!w.readOnly) out.push(`${m.Destination} is ${m.RW ? 'read-write' : 'read-only'}; the contract says ${w.readOnly ? 'read-only' : 'read-write'}`);
      want.delete(m.Destination);
    }
    if (/docker\.sock$/.test(m.Source ?? '') || /docker\.sock$/.test(m.Destination)) out.push(`a Docker socket is mounted (${m.Source} at ${m.Destination})`);
  }
  for (const w of want.values()) out.push(`contract mount missing: ${w.hostPath} at ${w.containerPath}`);
  if (info.HostConfig.NetworkMode !== 'none') out.push(`NetworkMode is ${info.HostConfig.NetworkMode}, not none`);
  if (info.HostConfig.Privileged) out.push('the container is privileged');
  if (info.HostConfig.CapAdd?.length) out.push(`capabilities added: ${info.HostConfig.CapAdd.join(', ')}`);
  if (info.HostConfig.Devices?.length) out.push(`devices passed: ${info.HostConfig.Devices.map((d: { PathOnHost?: string }) => d.PathOnHost).join(', ')}`);
  const user = info.Config.User ?? '';
  if (user === '' || user === 'root' || user === '0' || user.startsWith('0:')) out.push(`runs as root (User "${user}")`);
  return out;
}
