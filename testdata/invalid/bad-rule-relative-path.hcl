project = "edge"

service "api" {
  port = 8080
  frontend {
    rule = "Host:a.example.com;PathPrefix:api" # ERROR: Invalid frontend rule
  }
}
