project = "legacy"

agent "node-a" {
  address = "10.0.0.5:8500"
}

service "db" {
  agent   = agent.node-a
  node    = "legacy-host" # ERROR: Service with an agent and a node
  address = "10.0.0.50"
  port    = 5432
}

service "cache" {
  node = "legacy-host" # ERROR: External node without an address
  port = 6379
}
