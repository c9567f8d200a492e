-- Live step checking (issue 16): what "done" looks like for a phase is its expected files and,
-- where the coach agent names one, the test that passes then. Paige passes this filter as one
-- argument to the project's own test runner (never a command of its own making).
ALTER TABLE phases ADD COLUMN test_filter TEXT;
