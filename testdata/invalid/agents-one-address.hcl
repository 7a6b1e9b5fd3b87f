project = "edge"

agent "node-a" {
  address = "10.0.0.5:8500"
}

agent "node-b" {
  address = "10.0.0.5:8500" # ERROR: Two agents at one address
}
