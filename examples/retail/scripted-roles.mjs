// A scripted endpoint script (`traj mock-server --script examples/retail/scripted-roles.mjs`) that plays
// both parts of the retail example: requests for the model `customer` get the simulated customer,
// every other model the support agent. Each answer is decided from the request alone, so many
// conversations can share one server. `createRetailScript({ careless: true })` refunds the wrong order.

const reply = (content) => ({ content });
const call = (name, args) => ({ tool_calls: [{ name, arguments: args }] });
const text = (message) => (typeof message?.content === 'string' ? message.content : '');

function parsed(message) {
  try {
    return JSON.parse(text(message));
  } catch {
    return undefined;
  }
}

function agent(request, careless) {
  const messages = request.messages;
  const last = messages.at(-1);
  const said = messages.filter((message) => message.role === 'user').map(text).join('\n');
  const results = messages.filter((message) => message.role === 'tool').map(parsed).filter(Boolean);
  const finished = results.find((result) => result.order_id && ['refunded', 'cancelled'].includes(result.status));
  if (last.role === 'tool' && finished) return reply(`Done: order ${finished.order_id} is ${finished.status}.`);
  if (careless) return call('refund_order', { order_id: 'W1001', reason: 'customer asked' });
  const orderId = /W\d{4}/.exec(said)?.[0];
  if (!orderId) return reply('I can help with that. What is the order number?');
  const order = results.find((result) => result.id === orderId);
  if (!order) return call('get_order', { order_id: orderId });
  if (order.status === 'delivered' && order.total > 500)
    return call('transfer_to_human', {
      summary: `The customer wants a refund of $${order.total} for ${orderId}, over the $500 limit.`,
    });
  const action = order.status === 'processing' ? 'cancel' : 'refund';
  const asked = /shall i/i.test(text(messages.findLast((message) => message.role === 'assistant')));
  if (!(asked && last.role === 'user' && /^yes/i.test(text(last))))
    return reply(
      action === 'refund'
        ? `Order ${orderId} (${order.item}, $${order.total}) was delivered. Shall I refund $${order.total}?`
        : `Order ${orderId} (${order.item}) is still processing. Shall I cancel it?`,
    );
  return action === 'refund'
    ? call('refund_order', { order_id: orderId, reason: 'arrived broken' })
    : call('cancel_order', { order_id: orderId });
}

/** The customer reads its goal (with the order id) from its system prompt and answers the agent's last message. */
function customer(request) {
  const order = /W\d{4}/.exec(text(request.messages[0]))?.[0] ?? 'W0000';
  const last = text(request.messages.at(-1));
  if (/order number|which order/i.test(last)) return reply(`It's order ${order}.`);
  if (/shall i/i.test(last)) return reply('Yes, please.');
  if (/^done/i.test(last)) return reply('Thank you! ###STOP###');
  return reply('###STOP###');
}

export function createRetailScript({ careless = false } = {}) {
  return (request) => (request.model === 'customer' ? customer(request) : agent(request, careless));
}

export default createRetailScript();
