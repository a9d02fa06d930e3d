-- A tiny shop: customers, their orders, refunds issued and transfers to a human.
CREATE TABLE customers (id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE);
CREATE TABLE orders (
  id TEXT PRIMARY KEY,
  customer_id TEXT NOT NULL REFERENCES customers(id),
  item TEXT NOT NULL,
  total REAL NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('processing', 'delivered', 'cancelled', 'refunded'))
);
CREATE TABLE refunds (order_id TEXT NOT NULL REFERENCES orders(id), amount REAL NOT NULL, reason TEXT NOT NULL);
CREATE TABLE transfers (summary TEXT NOT NULL);

INSERT INTO customers VALUES
  ('C1', 'Ann Lee', 'ann@example.com'),
  ('C2', 'Bo Chen', 'bo@example.com'),
  ('C3', 'Cy Diaz', 'cy@example.com');
INSERT INTO orders VALUES
  ('W1001', 'C1', 'kettle', 39.00, 'delivered'),
  ('W1002', 'C1', 'blender', 89.50, 'delivered'),
  ('W1003', 'C2', 'desk lamp', 24.99, 'processing'),
  ('W1004', 'C2', 'headphones', 59.00, 'delivered'),
  ('W1005', 'C3', 'espresso machine', 649.00, 'delivered');
