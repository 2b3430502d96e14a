UPDATE /* TEMPLATE: schema */river_bpmn_timer
SET repeat_offset_us = repeat_offset_us + $2
WHERE id = $1;
