/**
 * The built-in Service: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import type { StatusCause } from '../../base/errors.js';
import { fieldInvalid, fieldRequired } from '../../base/errors.js';
import type { JsonObject } from '../../base/json.js';
import { isJsonObject } from '../../base/json.js';
import { getPath } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, str } from './builtin.js';
import { objectAt, setDefault } from './defaults.js';

const serviceStrategy: Strategy = {
  prepareForCreate(obj, ctx) {
    obj.status = { loadBalancer: {} };
    const spec = objectAt(obj, 'spec');
    setDefault(spec, 'type', 'ClusterIP');
    if (spec.type !== 'ExternalName' && (spec.clusterIP === undefined || spec.clusterIP === '')) {
      spec.clusterIP = ctx.allocateClusterIP();
    }
  },
  prepareForUpdate(obj, old) {
    const spec = objectAt(obj, 'spec');
    const oldIP = getPath(old, ['spec', 'clusterIP']);
    if ((spec.clusterIP === undefined || spec.clusterIP === '') && oldIP !== undefined) spec.clusterIP = oldIP;
  },
  defaults(obj) {
    const spec = objectAt(obj, 'spec');
    setDefault(spec, 'type', 'ClusterIP');
    if (spec.type === 'ExternalName') return;
    setDefault(spec, 'sessionAffinity', 'None');
    if (typeof spec.clusterIP === 'string' && spec.clusterIP !== '') setDefault(spec, 'clusterIPs', [spec.clusterIP]);
    setDefault(spec, 'ipFamilies', ['IPv4']);
    setDefault(spec, 'ipFamilyPolicy', 'SingleStack');
    setDefault(spec, 'internalTrafficPolicy', 'Cluster');
    if (Array.isArray(spec.ports)) {
      for (const p of spec.ports) {
        if (!isJsonObject(p)) continue;
        setDefault(p, 'protocol', 'TCP');
        if (p.port !== undefined) setDefault(p, 'targetPort', p.port);
      }
    }
  },
  validate(obj, old) {
    const spec = isJsonObject(obj.spec) ? obj.spec : {};
    const causes: StatusCause[] = [];
    const headless = spec.clusterIP === 'None';
    if (spec.type !== 'ExternalName' && !headless && (!Array.isArray(spec.ports) || spec.ports.length === 0)) {
      causes.push(fieldRequired('spec.ports', ''));
    }
    const oldIP = getPath(old, ['spec', 'clusterIP']);
    if (old && oldIP !== undefined && spec.clusterIP !== oldIP && spec.type === getPath(old, ['spec', 'type'])) {
      causes.push(fieldInvalid('spec.clusterIPs[0]', spec.clusterIP ?? null, 'may not change once set'));
    }
    return causes;
  },
};

function servicePorts(obj: JsonObject): string {
  const ports = getPath(obj, ['spec', 'ports']);
  if (!Array.isArray(ports) || ports.length === 0) return '<none>';
  return ports
    .map((p) =>
      isJsonObject(p) ? `${str(p.port)}${p.nodePort !== undefined ? `:${str(p.nodePort)}` : ''}/${str(p.protocol ?? 'TCP')}` : '',
    )
    .join(',');
}

export function serviceType(): ResourceType {
  return builtin({
    group: '',
    version: 'v1',
    plural: 'services',
    kind: 'Service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    status: true,
    nameRule: 'dns1035',
    strategy: serviceStrategy,
    columns: [
      column('Type', 'string', (o) => str(getPath(o, ['spec', 'type']))),
      column('Cluster-IP', 'string', (o) => str(getPath(o, ['spec', 'clusterIP'])) || '<none>'),
      column('External-IP', 'string', () => '<none>'),
      column('Port(s)', 'string', servicePorts),
    ],
  });
}
