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

service "queue" {
  node    = "legacy-host"
  address = "10.0.0.51"
  port    = 5672

  check "alive" { # ERROR: Check consul-esm does not run
    ttl = "30s"
  }
}
