project = "q"

service "web" {
  port = 8080
  tags = ["a", "b, "c"] # ERROR: Missing item separator
}

service "api" {
  port = 8081
}
