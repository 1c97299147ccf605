import type { Span } from '@opentelemetry/api';
import { redactSpanPaths } from './telemetry';

/** A span as the HTTP instrumentation hands it to its request hook: attributes already set. */
function spanWith(attributes: Record<string, string>): Span & { attributes: Record<string, string> } {
  const span = {
    attributes: { ...attributes },
    setAttribute(key: string, value: string) {
      span.attributes[key] = value;
      return span;
    },
  };
  return span as unknown as Span & { attributes: Record<string, string> };
}

describe('redactSpanPaths', () => {
  it('names link tokens by their route and keeps query names without their values', () => {
    const span = spanWith({
      'url.path': '/i/AbCdEf0123456789AbCdEf0123/conversations',
      'url.query': 'q=alice%40example.com&page=2',
      'url.full': 'http://dash.example/dashboard/p/prj_1/campaigns/cmp_1/recipients?q=alice%40example.com',
      'http.target': '/admin/v1/projects/prj_1/recipients/rcp_1/prompt?sample=my%20account%20number%2042',
    });
    redactSpanPaths(span);
    expect(span.attributes).toEqual({
      'url.path': '/i/:token/conversations',
      'url.query': 'q=&page=',
      'url.full': 'http://dash.example/dashboard/p/prj_1/campaigns/cmp_1/recipients?q=',
      'http.target': '/admin/v1/projects/prj_1/recipients/rcp_1/prompt?sample=',
    });
  });

  it('leaves paths without tokens or queries as they are', () => {
    const span = spanWith({ 'url.path': '/api/v1/projects/prj_1/recipients', 'http.target': '/livez' });
    redactSpanPaths(span);
    expect(span.attributes).toEqual({
      'url.path': '/api/v1/projects/prj_1/recipients',
      'http.target': '/livez',
    });
  });
});
