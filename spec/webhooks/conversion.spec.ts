import { expect } from 'chai';
import { ConfigurationError } from '../../lib/core/index.js';
import { checkRoundTrip, conversionWebhook, reviewConversion, spoke } from '../../lib/webhooks/index.js';
import { v1Spoke, type GreetingV1, type GreetingV2 } from './fixtures.js';

const conversion = conversionWebhook<GreetingV2>({ group: 'example.com', plural: 'greetings', hub: 'v2', spokes: { v1: v1Spoke } });
const v1 = (message: string): GreetingV1 => ({
  apiVersion: 'example.com/v1',
  kind: 'Greeting',
  metadata: { name: 'g', namespace: 'default', uid: 'u', resourceVersion: '7' },
  spec: { message },
});

describe('webhooks: conversion (hub and spoke)', () => {
  it('a ConversionReview is answered with the uid, every object in desiredAPIVersion and result Success', () => {
    const answer = reviewConversion(conversion, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'c-1', desiredAPIVersion: 'example.com/v2', objects: [v1('Hello, World')] },
    });
    expect(answer).to.deep.equal({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: {
        uid: 'c-1',
        result: { status: 'Success' },
        convertedObjects: [
          {
            apiVersion: 'example.com/v2',
            kind: 'Greeting',
            metadata: { name: 'g', namespace: 'default', uid: 'u', resourceVersion: '7' },
            spec: { greeting: 'Hello', name: 'World' },
          },
        ],
      },
    });
  });

  it('metadata other than labels and annotations is kept whatever a conversion function does with it', () => {
    const meddling = conversionWebhook<GreetingV2>({
      group: 'example.com',
      plural: 'greetings',
      hub: 'v2',
      spokes: {
        v1: spoke<GreetingV1, GreetingV2>({
          toHub: (o) => ({ ...o, metadata: { name: 'other', labels: { a: 'b' } }, spec: { greeting: o.spec.message, name: '' } }),
          fromHub: (h) => ({ ...h, spec: { message: h.spec.greeting } }),
        }),
      },
    });
    const converted = meddling.convert(v1('hi'), 'v2');
    expect(converted.metadata).to.deep.equal({ name: 'g', namespace: 'default', uid: 'u', resourceVersion: '7', labels: { a: 'b' } });
  });

  it('an object that cannot be converted gives result Failure with a message naming it', () => {
    const answer = reviewConversion(conversion, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'c-2', desiredAPIVersion: 'example.com/v1', objects: [{ ...v1('x'), apiVersion: 'example.com/v9' }] },
    });
    expect(answer.response.uid).to.equal('c-2');
    expect(answer.response.convertedObjects).to.deep.equal([]);
    expect(answer.response.result).to.deep.equal({
      status: 'Failure',
      message: 'converting default/g from example.com/v9 to example.com/v1: no conversion for version v9 (known: v2, v1)',
    });
  });

  it('checkRoundTrip passes for lossless examples and names the lost fields otherwise', () => {
    checkRoundTrip(conversion, [v1('Hello, World'), v1('Hi')]);
    // "a, b, c" splits into greeting "a" and name "b": ", c" is lost on the way back.
    expect(() => checkRoundTrip(conversion, [v1('a, b, c')])).to.throw(/g v1 → v2 → v1: replace \/spec\/message/);
  });

  it('bad options are ConfigurationErrors naming the option', () => {
    const option = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return (err as ConfigurationError).option;
      }
      return undefined;
    };
    expect(option(() => conversionWebhook({ group: 'example', plural: 'greetings', hub: 'v2', spokes: { v1: v1Spoke } }))).to.equal(
      'group',
    );
    expect(option(() => conversionWebhook({ group: 'example.com', plural: 'greetings', hub: 'v2', spokes: {} }))).to.equal('spokes');
    expect(
      option(() => conversionWebhook({ group: 'example.com', plural: 'greetings', hub: 'v2', spokes: { v2: v1Spoke as never } })),
    ).to.equal('spokes.v2');
    expect(option(() => checkRoundTrip(conversion, []))).to.equal('examples');
  });
});
