project = "edge"

agent "node-a" {
  address = "127.0.0.1:8500"
}

service "api" {
  agent = "node-c" # ERROR: Reference to undeclared agent
  port  = 8080
}
