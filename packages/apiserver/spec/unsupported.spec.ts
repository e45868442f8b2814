/**
 * What the server does not do, pinned so that docs/apiserver.md's comparison table stays true
 * when it changes: its "no" cells name these tests.
 */
import { expect } from 'chai';
import { raw, startWithClients, type Clients } from './helpers.js';

describe('apiserver: what it does not do (the "no" rows of the comparison table)', () => {
  let c: Clients;

  before(async () => {
    c = await startWithClients();
  });
  after(async () => {
    await c?.server.close();
  });

  it('does not serve MutatingAdmissionPolicy (admissionregistration.k8s.io/v1beta1, 404)', async () => {
    expect((await raw(c.server, 'GET', '/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies')).status).to.equal(404);
    expect((await raw(c.server, 'GET', '/apis/admissionregistration.k8s.io/v1alpha1/mutatingadmissionpolicies')).status).to.equal(404);
  });
});
