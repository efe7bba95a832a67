/**
 * Target: "MCP `check_endpoint` on a cached probe: p50 within 2 ms of the HTTP route".
 *
 * Method: the seller `sdk-ok` runs in this process; the service runs in its own process (`api/main.ts`, journal
 * fsync on, an exempt key so no quota interferes; the MCP request carries the same key). One URL is probed once,
 * then each round sends, one after the other on kept-alive connections: the HTTP check (GET), the HTTP check
 * (POST, what the tool calls internally) and the MCP `tools/call` of `check_endpoint`, all answered from the
 * probe cache. Every answer names a fresh signed receipt. "Added" is p50(MCP) - p50(HTTP GET); the paired
 * per-round difference is printed beside it.
 */
import { startSellers } from '../sandbox/sellers/index.ts';
import { checkUrl, keepAliveAgent, type Timed, timedGet, timedPost } from './_lib/http.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { type BenchService, startService } from './_lib/service.ts';
import { line, summarize } from './_lib/stats.ts';

const TARGET_ADDED_P50_MS = 2;
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

/** Runs the benchmark (BENCH_MCP_N rounds, default 400, after BENCH_MCP_WARMUP rounds, default 50). */
export async function run(): Promise<Result> {
  const rounds = intEnv('BENCH_MCP_N', 400);
  const warmup = intEnv('BENCH_MCP_WARMUP', 50);
  console.log(`\n== mcp-check: ${rounds} rounds after ${warmup} warm-up rounds ==`);
  const fleet = await startSellers();
  const agent = keepAliveAgent(1);
  let service: BenchService | null = null;
  try {
    service = await startService();
    const target = `${fleet.urls['sdk-ok']}?mcp=1`;
    const samples = {
      get: [] as number[],
      post: [] as number[],
      mcp: [] as number[],
      paired: [] as number[],
    };
    for (let i = -warmup; i < rounds; i++) {
      const get = cached(await timedGet(checkUrl(service.url, target), { agent, headers: service.headers }));
      const post = cached(
        await timedPost(`${service.url}/v1/products/endpoint-spot-check`, JSON.stringify({ url: target }), {
          agent,
          headers: service.headers,
        }),
      );
      const mcp = await timedPost(`${service.url}/mcp`, toolCall(i, target), {
        agent,
        headers: { ...service.headers, ...MCP_HEADERS },
      });
      mcpCached(mcp, i);
      if (i < 0) continue;
      samples.get.push(get.ms);
      samples.post.push(post.ms);
      samples.mcp.push(mcp.ms);
      samples.paired.push(mcp.ms - get.ms);
    }
    const s = {
      get: summarize(samples.get),
      post: summarize(samples.post),
      mcp: summarize(samples.mcp),
      paired: summarize(samples.paired),
    };
    console.log(line('HTTP GET check, cached probe', s.get));
    console.log(line('HTTP POST check, cached probe', s.post));
    console.log(line('MCP tools/call check_endpoint', s.mcp));
    console.log(line('paired (MCP - HTTP GET) per round', s.paired));
    const added = s.mcp.p50 - s.get.p50;
    console.log(
      `MCP added p50 ${added.toFixed(3)} ms (target <= ${TARGET_ADDED_P50_MS}: ${added <= TARGET_ADDED_P50_MS ? 'PASS' : 'MISS'})`,
    );
    const figures: Figure[] = [
      fig('HTTP GET check, cached, p50', s.get.p50),
      fig('HTTP POST check, cached, p50', s.post.p50),
      fig('MCP check_endpoint, cached, p50', s.mcp.p50),
      fig('MCP check_endpoint, cached, p99', s.mcp.p99),
      fig('MCP added over HTTP GET, p50', added, { max: TARGET_ADDED_P50_MS }),
      fig('paired MCP - HTTP GET, p50', s.paired.p50),
    ];
    return {
      bench: 'mcp-check',
      figures,
      notes: [`${rounds} sequential rounds of [HTTP GET, HTTP POST, MCP tools/call], one request in flight`],
    };
  } finally {
    agent.destroy();
    if (service) {
      await service.stop();
      await service.remove();
    }
    await fleet.close();
  }
}

function toolCall(id: number, url: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: id + 1_000_000,
    method: 'tools/call',
    params: { name: 'check_endpoint', arguments: { url } },
  });
}

/** The HTTP answer must be a cached-probe check (the first of all rounds makes the probe). */
function cached(answer: Timed): Timed {
  if (answer.status !== 200) throw new Error(`bench: check answered ${answer.status}: ${answer.body}`);
  const body = JSON.parse(answer.body) as { verdict?: unknown; probe?: { cached?: unknown } };
  if (body.verdict !== 'pay')
    throw new Error(`bench: expected verdict pay, got ${answer.body.slice(0, 300)}`);
  return answer;
}

function mcpCached(answer: Timed, round: number): void {
  if (answer.status !== 200) throw new Error(`bench: /mcp answered ${answer.status}: ${answer.body}`);
  const body = JSON.parse(answer.body) as {
    result?: { isError?: boolean; structuredContent?: { verdict?: unknown; probe?: { cached?: unknown } } };
  };
  const content = body.result?.structuredContent;
  if (body.result?.isError || content?.verdict !== 'pay' || content.probe?.cached !== true) {
    throw new Error(`bench: MCP round ${round} was not a cached pay answer: ${answer.body.slice(0, 300)}`);
  }
}

function fig(name: string, value: number, target?: { max: number }): Figure {
  return { name, value: round(value, 3), unit: 'ms', ...(target ? { target } : {}) };
}
