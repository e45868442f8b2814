import { expect } from 'chai';
import { ConfigurationError } from '../../lib/core/index.js';
import { parseApiVersion, resolveDescriptor, resourcePath } from '../../lib/kube/index.js';
import { groupResource } from '../../lib/kube/descriptor.js';

describe('kube/descriptor', () => {
  const configMaps = resolveDescriptor({ apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' });
  const webPages = resolveDescriptor({ apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage', plural: 'webpages' });
  const namespaces = resolveDescriptor({ apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false });

  it('derives group and version, namespaced by default', () => {
    expect(configMaps).to.include({ group: '', version: 'v1', namespaced: true });
    expect(webPages).to.include({ group: 'sample.rxkube.dev', version: 'v1', namespaced: true });
    expect(parseApiVersion('apps/v1')).to.deep.equal({ group: 'apps', version: 'v1' });
    expect(parseApiVersion('v1beta1')).to.deep.equal({ group: '', version: 'v1beta1' });
    expect(groupResource(webPages)).to.equal('webpages.sample.rxkube.dev');
    expect(groupResource(configMaps)).to.equal('configmaps');
  });

  it('rejects a missing plural, naming the kind and the field', () => {
    expect(() => resolveDescriptor({ apiVersion: 'v1', kind: 'ConfigMap' } as never))
      .to.throw(ConfigurationError, /^resource\.plural: ConfigMap \(v1\) needs a plural/)
      .with.property('option', 'resource.plural');
    expect(() => resolveDescriptor({ apiVersion: 'v1', kind: 'ConfigMap', plural: 'Config_Maps' })).to.throw(
      /resource\.plural: .*'Config_Maps'/,
    );
  });

  it('rejects a bad apiVersion or kind with a clear message', () => {
    expect(() => resolveDescriptor({ apiVersion: 'a/b/v1', kind: 'X', plural: 'xs' })).to.throw(
      /resource\.apiVersion: X: apiVersion 'a\/b\/v1'/,
    );
    expect(() => resolveDescriptor({ apiVersion: 'Sample.IO/v1', kind: 'X', plural: 'xs' })).to.throw(/group 'Sample.IO'/);
    expect(() => resolveDescriptor({ apiVersion: 'example.com/', kind: 'X', plural: 'xs' })).to.throw(/version ''/);
    expect(() => resolveDescriptor({ apiVersion: '', kind: 'X', plural: 'xs' })).to.throw(/apiVersion is required/);
    expect(() => resolveDescriptor({ apiVersion: 'v1', kind: '', plural: 'xs' })).to.throw(/resource\.kind: is required/);
    expect(() => resolveDescriptor({ apiVersion: 'v1', kind: 'X', plural: 'xs', namespaced: 'yes' as never })).to.throw(
      /resource\.namespaced: .*must be a boolean/,
    );
  });

  it('builds paths for core and group, namespaced and cluster-scoped, with subresources', () => {
    expect(resourcePath(configMaps)).to.equal('/api/v1/configmaps');
    expect(resourcePath(configMaps, { namespace: 'default' })).to.equal('/api/v1/namespaces/default/configmaps');
    expect(resourcePath(configMaps, { namespace: 'default', name: 'a b' })).to.equal('/api/v1/namespaces/default/configmaps/a%20b');
    expect(resourcePath(webPages, { namespace: 'ns', name: 'p', subresource: 'status' })).to.equal(
      '/apis/sample.rxkube.dev/v1/namespaces/ns/webpages/p/status',
    );
    expect(resourcePath(namespaces, { name: 'kube-system', namespace: 'ignored' })).to.equal('/api/v1/namespaces/kube-system');
  });

  it('refuses an object path of a namespaced type without a namespace', () => {
    expect(() => resourcePath(webPages, { name: 'p' })).to.throw(/WebPage 'p' is namespaced.*namespace is required/);
    expect(() => resourcePath(webPages, { namespace: 'ns', subresource: 'status' })).to.throw(/needs an object name/);
  });
});
