project = "edge"

service "api" {
  port = 8080
  tags = [uppr("v1")] # ERROR: Call to unknown function
}
