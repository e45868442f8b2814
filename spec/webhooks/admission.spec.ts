import { expect } from 'chai';
import { lastValueFrom, map, of, Subject, toArray } from 'rxjs';
import { ConfigurationError } from '../../lib/core/index.js';
import {
  admissionRequests,
  admissionReviewFor,
  allow,
  applyJsonPatch,
  deny,
  MalformedReviewError,
  mutate,
  mutatingWebhook,
  reviewAdmission,
  validate,
  validatingWebhook,
  type AdmissionAnswer,
  type AdmissionRequest,
} from '../../lib/webhooks/index.js';
import { admissionRequest } from '../../lib/webhooks/admission.js';
import { aGreeting, greeting, type Greeting } from './fixtures.js';

const noEmptyMessage = validatingWebhook<Greeting>({
  name: 'validate.greetings.example.com',
  resource: greeting,
  validate: (req) =>
    req.object?.spec.message
      ? allow()
      : deny('spec.message must not be empty', { code: 422, reason: 'Invalid', warnings: ['see the docs'] }),
});

const defaults = mutatingWebhook<Greeting>({
  name: 'default.greetings.example.com',
  resource: greeting,
  mutate: (req) => {
    const object = req.object as Greeting;
    object.spec.replicas ??= 1;
    object.metadata = { ...object.metadata, labels: { ...object.metadata?.labels, 'example.com/defaulted': 'true' } };
    return allow(['replicas defaulted to 1']);
  },
});

describe('webhooks: admission handlers', () => {
  it('a validating handler gets the typed object, oldObject on UPDATE, userInfo, dryRun and operation', async () => {
    const seen: AdmissionRequest<Greeting>[] = [];
    const webhook = validatingWebhook<Greeting>({
      name: 'seen.greetings.example.com',
      resource: greeting,
      validate: (req) => (seen.push(req), allow()),
    });
    const review = admissionReviewFor({
      operation: 'UPDATE',
      object: aGreeting({ message: 'new' }),
      oldObject: aGreeting({ message: 'old' }),
      userInfo: { username: 'alice', groups: ['devs'] },
      dryRun: true,
      uid: 'abc',
    });
    const answer = await reviewAdmission(webhook, review);
    expect(answer).to.deep.equal({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'abc', allowed: true } });
    expect(seen[0]).to.include({ operation: 'UPDATE', dryRun: true, uid: 'abc', name: 'hello', namespace: 'default' });
    expect(seen[0]?.object?.spec.message).to.equal('new');
    expect(seen[0]?.oldObject?.spec.message).to.equal('old');
    expect(seen[0]?.userInfo).to.deep.equal({ username: 'alice', groups: ['devs'] });
  });

  it('a denial echoes the uid and carries the message, status code, reason and warnings', async () => {
    const answer = await reviewAdmission(noEmptyMessage, admissionReviewFor({ operation: 'CREATE', object: aGreeting({}), uid: 'u-42' }));
    expect(answer.response).to.deep.equal({
      uid: 'u-42',
      allowed: false,
      status: { code: 422, message: 'spec.message must not be empty', reason: 'Invalid' },
      warnings: ['see the docs'],
    });
  });

  it('a denial without a code is 403', async () => {
    const webhook = validatingWebhook<Greeting>({ name: 'no.greetings.example.com', resource: greeting, validate: () => deny('never') });
    const answer = await reviewAdmission(webhook, admissionReviewFor({ operation: 'CREATE', object: aGreeting({}) }));
    expect(answer.response.status).to.deep.equal({ code: 403, message: 'never' });
  });

  it('a mutating handler that edits the object in place answers a base64 JSONPatch that turns the request object into it', async () => {
    const object = aGreeting({ message: 'hi' });
    const answer = await reviewAdmission(defaults, admissionReviewFor({ operation: 'CREATE', object }));
    expect(answer.response).to.include({ allowed: true, patchType: 'JSONPatch' });
    expect(answer.response.warnings).to.deep.equal(['replicas defaulted to 1']);
    const ops = JSON.parse(Buffer.from(answer.response.patch ?? '', 'base64').toString('utf8')) as unknown[];
    expect(ops).to.deep.equal([
      { op: 'add', path: '/metadata/labels', value: { 'example.com/defaulted': 'true' } },
      { op: 'add', path: '/spec/replicas', value: 1 },
    ]);
    expect(applyJsonPatch(object, ops as never)).to.deep.equal({
      ...object,
      metadata: { ...object.metadata, labels: { 'example.com/defaulted': 'true' } },
      spec: { message: 'hi', replicas: 1 },
    });
  });

  it('a mutating handler may return { object } instead, and one that changes nothing sends no patch', async () => {
    const replace = mutatingWebhook<Greeting>({
      name: 'up.greetings.example.com',
      resource: greeting,
      mutate: (req) => ({ object: { ...(req.object as Greeting), spec: { message: 'HI' } } }),
    });
    const answer = await reviewAdmission(replace, admissionReviewFor({ operation: 'CREATE', object: aGreeting({ message: 'hi' }) }));
    expect(JSON.parse(Buffer.from(answer.response.patch ?? '', 'base64').toString())).to.deep.equal([
      { op: 'replace', path: '/spec/message', value: 'HI' },
    ]);
    const same = await reviewAdmission(
      defaults,
      admissionReviewFor({ operation: 'CREATE', object: aGreeting({ message: 'hi', replicas: 2 }, 'x') }),
    );
    expect(same.response.patch).to.not.equal(undefined); // the label is still added
    const untouched = mutatingWebhook<Greeting>({ name: 'id.greetings.example.com', resource: greeting, mutate: () => allow() });
    const none = await reviewAdmission(untouched, admissionReviewFor({ operation: 'CREATE', object: aGreeting({ message: 'hi' }) }));
    expect(none.response).to.deep.equal({ uid: '00000000-0000-0000-0000-000000000000', allowed: true });
  });

  it('a handler that throws rejects the review (the server answers 500 and the API server applies failurePolicy)', async () => {
    const broken = validatingWebhook<Greeting>({
      name: 'broken.greetings.example.com',
      resource: greeting,
      validate: () => {
        throw new Error('cache not ready');
      },
    });
    let failed: unknown;
    await reviewAdmission(broken, admissionReviewFor({ operation: 'CREATE', object: aGreeting({}) })).catch(
      (err: unknown) => (failed = err),
    );
    expect((failed as Error).message).to.equal('cache not ready');
  });

  it('a mutating request that cannot even be copied (nested 50,000 deep) fails alone: a review in flight is still answered', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const requests = new Subject<AdmissionRequest<Greeting>>();
    const answers: AdmissionAnswer[] = [];
    let failed: unknown;
    requests
      .pipe(
        mutate<Greeting>(async (req) => {
          if (req.uid === 'legit') await held;
          return allow();
        }),
      )
      .subscribe({ next: (a) => answers.push(a), error: (err: unknown) => (failed = err) });
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 50_000; i++) deep = { a: deep };
    const request = (uid: string, spec: unknown) =>
      admissionRequest<Greeting>(
        admissionReviewFor({ operation: 'CREATE', uid, object: { ...aGreeting({}), spec: spec as Greeting['spec'] } }),
      );
    requests.next(request('legit', { message: 'hi' }));
    requests.next(request('deep', deep));
    release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(failed, 'the pipeline failed').to.equal(undefined);
    const byUid = Object.fromEntries(answers.map((a) => [a.uid, a]));
    expect(byUid['deep']).to.have.property('error').that.is.instanceOf(RangeError);
    expect(byUid['legit']).to.include({ allowed: true });
  });

  it('a malformed review is a MalformedReviewError naming what is wrong', async () => {
    let failed: unknown;
    await reviewAdmission(noEmptyMessage, { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview' }).catch(
      (err: unknown) => (failed = err),
    );
    expect(failed).to.be.instanceOf(MalformedReviewError);
    expect((failed as Error).message).to.match(/admission.k8s.io\/v1 AdmissionReview/);
  });

  it('requests compose as an Observable: admissionRequests() and validate() are pipeable operators', async () => {
    const reviews = [
      admissionReviewFor({ operation: 'CREATE', object: aGreeting({ message: 'a' }), uid: '1' }),
      admissionReviewFor({ operation: 'CREATE', object: aGreeting({}), uid: '2' }),
    ];
    const answers = await lastValueFrom(
      of(...reviews).pipe(
        admissionRequests<Greeting>(),
        validate((req) => (req.object?.spec.message ? allow() : deny('empty'))),
        map((a) => ('allowed' in a ? `${a.uid}:${a.allowed}` : `${a.uid}:error`)),
        toArray(),
      ),
    );
    expect(answers).to.have.members(['1:true', '2:false']);
  });

  it('bad options are ConfigurationErrors naming the option', () => {
    const attempt = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return err as ConfigurationError;
      }
      throw new Error('no error');
    };
    expect(attempt(() => validatingWebhook({ name: 'short.name', resource: greeting, validate: () => allow() })).option).to.equal('name');
    expect(
      attempt(() => validatingWebhook({ name: 'a.b.c', resource: greeting, validate: () => allow(), timeoutSeconds: 31 })).option,
    ).to.equal('timeoutSeconds');
    expect(
      attempt(() => validatingWebhook({ name: 'a.b.c', resource: greeting, validate: () => allow(), operations: ['PATCH' as never] }))
        .option,
    ).to.equal('operations');
    expect(attempt(() => validatingWebhook({ name: 'a.b.c', resource: greeting } as never)).option).to.equal('validate');
    expect(
      attempt(() => mutatingWebhook({ name: 'a.b.c', resource: { apiVersion: 'x/v1', kind: 'lower', plural: 'x' }, mutate: () => allow() }))
        .option,
    ).to.equal('resource.kind');
  });
});
