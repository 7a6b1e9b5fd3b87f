project = "edge"

service "a" {
  port = 0 # ERROR: Invalid port
}
