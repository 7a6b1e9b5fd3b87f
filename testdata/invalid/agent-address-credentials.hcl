project = "edge"

agent "node-a" {
  address = "https://ops:hunter2@10.0.0.5:8501" # ERROR: Credentials in a spec
}
