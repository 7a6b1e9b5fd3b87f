project = "edge"

service "api" {
  port = 8080
  frontend {
    rule = "/api" # ERROR: Invalid frontend rule
  }
}
