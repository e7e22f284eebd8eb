// Reads the benchmark's cases (JSON on stdin), decides each with @cloud-copilot/iam-simulate, and
// prints {decisions: [...], per_call_us} (each case decided `rounds` times after one warm-up).
import { runSimulation } from '@cloud-copilot/iam-simulate'

const input = JSON.parse(await new Promise((resolve) => {
  let text = ''
  process.stdin.on('data', (chunk) => (text += chunk))
  process.stdin.on('end', () => resolve(text))
}))

function simulation(c) {
  return {
    request: {
      principal: c.principal, action: c.action,
      resource: { resource: c.resource, accountId: c.resource_account || c.account },
      contextVariables: Object.fromEntries(c.context),
    },
    identityPolicies: c.identity.map((policy, i) => ({ name: `identity-${i}`, policy })),
    serviceControlPolicies: [], resourceControlPolicies: [],
    resourcePolicy: c.resource_policy || undefined,
  }
}

const decisions = []
for (const c of input.cases) {
  const result = await runSimulation(simulation(c), {})
  decisions.push(result.resultType === 'error' ? `error: ${result.errors.message}` : result.overallResult)
}
const started = process.hrtime.bigint()
let calls = 0
for (let round = 0; round < input.rounds; round++) {
  for (const c of input.cases) {
    await runSimulation(simulation(c), {})
    calls++
  }
}
const per_call_us = Number(process.hrtime.bigint() - started) / 1000 / calls
console.log(JSON.stringify({ decisions, per_call_us }))
