// The retail environment's tools: each one reads or writes retail.db, an SQLite database inside the
// rollout's sandbox, with the sandbox's own sqlite3. A thrown Error becomes a tool result the agent
// reads ({"error": ...}); the rules of the shop live here, where the agent cannot skip them.
// traj calls tools({ z }) with its own zod, so this file imports nothing.

const REFUND_LIMIT = 500;

/** SQL text as one single-quoted shell word. */
const shellWord = (text) => `'${text.replaceAll("'", "'\\''")}'`;
/** A value as an SQL string literal (values are validated above; quoting is still done right). */
const literal = (value) => `'${String(value).replaceAll("'", "''")}'`;

async function sql(context, statement) {
  const run = await context.sandbox.exec(`sqlite3 -json -bail retail.db ${shellWord(statement)}`, {
    signal: context.signal,
  });
  if (run.exitCode !== 0) throw new Error(`database error: ${run.stderr.trim() || `exit ${run.exitCode}`}`);
  return run.stdout.trim() ? JSON.parse(run.stdout) : [];
}

async function order(context, id) {
  const [found] = await sql(context, `SELECT * FROM orders WHERE id = ${literal(id)}`);
  if (!found) throw new Error(`no order ${id}`);
  return found;
}

export function tools({ z }) {
  const ORDER_ID = z
    .string()
    .regex(/^W\d{4}$/, 'an order id is W followed by 4 digits, e.g. W1002')
    .describe('the order id, e.g. W1002');
  return [
    {
      name: 'find_customer',
      description: 'Find a customer by email, with their orders.',
      parameters: z.object({ email: z.string().email().describe("the customer's email") }),
      async run({ email }, context) {
        const [customer] = await sql(context, `SELECT * FROM customers WHERE email = ${literal(email)}`);
        if (!customer) throw new Error(`no customer with email ${email}`);
        const orders = await sql(context, `SELECT id, item, total, status FROM orders WHERE customer_id = ${literal(customer.id)}`);
        return { ...customer, orders };
      },
    },
    {
      name: 'get_order',
      description: 'Look up an order: item, total, status (processing, delivered, cancelled, refunded).',
      parameters: z.object({ order_id: ORDER_ID }),
      run: ({ order_id }, context) => order(context, order_id),
    },
    {
      name: 'refund_order',
      description: `Refund a delivered order in full (at most $${REFUND_LIMIT}; larger refunds go to a human). Confirm with the customer first.`,
      parameters: z.object({ order_id: ORDER_ID, reason: z.string().min(3).describe('why, in a few words') }),
      async run({ order_id, reason }, context) {
        const found = await order(context, order_id);
        if (found.status !== 'delivered')
          throw new Error(`order ${order_id} is ${found.status}: only delivered orders can be refunded (cancel a processing one)`);
        if (found.total > REFUND_LIMIT)
          throw new Error(`order ${order_id} totals $${found.total}: refunds over $${REFUND_LIMIT} need a human (transfer_to_human)`);
        await sql(
          context,
          `BEGIN; INSERT INTO refunds VALUES (${literal(order_id)}, ${found.total}, ${literal(reason)}); UPDATE orders SET status = 'refunded' WHERE id = ${literal(order_id)}; COMMIT;`,
        );
        return { order_id, refunded: found.total, status: 'refunded' };
      },
    },
    {
      name: 'cancel_order',
      description: 'Cancel an order that has not shipped yet (status processing). Confirm with the customer first.',
      parameters: z.object({ order_id: ORDER_ID }),
      async run({ order_id }, context) {
        const found = await order(context, order_id);
        if (found.status !== 'processing')
          throw new Error(`order ${order_id} is ${found.status}: only processing orders can be cancelled`);
        await sql(context, `UPDATE orders SET status = 'cancelled' WHERE id = ${literal(order_id)}`);
        return { order_id, status: 'cancelled' };
      },
    },
    {
      name: 'transfer_to_human',
      description: 'Hand the conversation to a human agent, with a summary. Ends the conversation.',
      parameters: z.object({ summary: z.string().min(10).describe('what the customer wants and why you cannot do it') }),
      async run({ summary }, context) {
        await sql(context, `INSERT INTO transfers VALUES (${literal(summary)})`);
        return 'Transferred. A human agent will take over.';
      },
    },
  ];
}
