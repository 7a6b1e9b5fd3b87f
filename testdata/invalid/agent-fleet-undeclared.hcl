project = "edge"

locals {
  nodes = { n1 = "10.0.0.5:8500", n2 = "10.0.0.6:8500" }
}

agent "fleet" {
  for_each = local.nodes
  address  = each.value
}

service "web" {
  agent = agent.nodes["n1"] # ERROR: Reference to undeclared agent
  port  = 8080
}

service "api" {
  agent = agent.fleet["n3"] # ERROR: Invalid index
  port  = 8081
}
