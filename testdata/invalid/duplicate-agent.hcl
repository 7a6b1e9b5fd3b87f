project = "edge"

agent "node-a" {
  address = "10.0.0.5:8500"
}

agent "node-a" { # ERROR: Duplicate agent block
  address = "10.0.0.6:8500"
}
