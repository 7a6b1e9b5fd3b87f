project = "edge"

service "api" {
  port = 8080
  frontend {
    rule = "Paht:/api" # ERROR: Invalid frontend rule
  }
}
