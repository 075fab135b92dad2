package bad_test

func helper() string { return "help" }
