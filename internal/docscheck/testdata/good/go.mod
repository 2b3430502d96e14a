module example.com/fixture
