-- The schema unqualified names resolve to (the first of the search_path that
-- exists), '' when none does.
SELECT coalesce(current_schema(), '');
