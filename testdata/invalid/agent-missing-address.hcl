project = "edge"

agent "node-a" { # ERROR: Missing required argument
}
