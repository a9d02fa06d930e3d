// traj mock-server --script examples/eval/rubric-models.mjs (docs/eval.md): the policy and a
// panel of three judges on one server, told apart by the model asked for. Every judge scores
// 7 of 10; judge-c fails the answer, so the panel agrees at 2/3.
export default function script(request) {
  if (!String(request.model).startsWith('judge-')) return { content: 'A short, careful answer.' };
  const pass = request.model !== 'judge-c';
  return { content: JSON.stringify({ reasoning: `${request.model}: clear but brief.`, score: 7, pass }) };
}
