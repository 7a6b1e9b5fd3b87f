project = "edge"

service "a" {
  port = 70000 # ERROR: Invalid port
}
