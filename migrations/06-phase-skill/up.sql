-- Hints fade with demonstrated mastery (issue 15): each phase names the skill area it
-- exercises, and, when the learner's history in that area moved its starting hint level
-- away from the coach agent's, why (shown in the coaching panel).
ALTER TABLE phases ADD COLUMN skill_area TEXT;
ALTER TABLE phases ADD COLUMN hint_reason TEXT;
CREATE INDEX phases_skill_area ON phases(skill_area, completed_at) WHERE skill_area IS NOT NULL;
