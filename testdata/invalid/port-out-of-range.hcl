project = "edge"

service "api" {
  port = 70000 # ERROR: Invalid port
}
